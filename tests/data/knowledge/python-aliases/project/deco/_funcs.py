def as_dict(value):
    return dict(vars(value))


def evolve(value, **changes):
    return value
