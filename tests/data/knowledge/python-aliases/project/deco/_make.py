"""The long names: what the package's short aliases are bound to."""


def make_thing(maybe_cls=None, *, hook=None, frozen=False):
    if maybe_cls is None:
        return lambda cls: cls
    return maybe_cls


def attrib(default=None, converter=None):
    return default


class Factory:
    def __init__(self, make):
        self.make = make
