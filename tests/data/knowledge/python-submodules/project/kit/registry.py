REGISTRY = []


def register(function=None, *, hook=None, when=None):
    if function is None:
        return lambda f: register(f, hook=hook, when=when)
    REGISTRY.append((function, hook))
    return function
