def check(value):
    return value is not None


def before(value):
    return value


TIMEOUT = 5
