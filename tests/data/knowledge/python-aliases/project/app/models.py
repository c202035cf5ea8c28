import deco
import deco as d
from deco import longer_name as ln
from deco import short


@deco.short
class Point:
    x = deco.field()
    y = deco.attr_alias(default=0)


@deco.short(hook=None, frozen=True)
class Line:
    start = deco.field(default=None)
    end = d.field(converter=int)


@d.longer_name
class Box:
    corner = deco.attr_alias()


@ln(frozen=True)
class Circle:
    radius = d.attr_alias()


@short
class Label:
    text = deco.field()


@deco.quick
class Empty:
    pass


def dump(value):
    first = deco.asdict(value)
    second = d.asdict(deco.evolve(value))
    return first, second, deco.Factory(deco.short)


@deco.define
class Ray:
    origin = deco.field()


@d.frozen(hook=deco._make.attrib)
class Segment:
    pass


def moved(value):
    return deco.replace(value), d.replace(deco.evolve(value))
