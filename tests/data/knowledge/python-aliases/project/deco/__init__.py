from ._funcs import as_dict, evolve
from ._make import Factory, attrib, make_thing

short = longer_name = make_thing
field = attr_alias = attrib
quick = short
asdict = as_dict

__all__ = ["Factory", "asdict", "attr_alias", "evolve", "field", "longer_name", "short"]

from . import _funcs, _make

define = frozen = _make.make_thing
replace = _funcs.evolve
