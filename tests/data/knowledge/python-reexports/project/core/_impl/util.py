def flatten(items):
    return [x for group in items for x in group]


def chunked(items, size):
    return [items[i : i + size] for i in range(0, len(items), size)]
