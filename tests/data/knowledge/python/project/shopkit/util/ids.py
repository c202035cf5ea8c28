_counter = 0


def next_id(prefix):
    global _counter
    _counter = _counter + 1
    return "%s-%d" % (prefix, _counter)


def issued():
    return _counter
