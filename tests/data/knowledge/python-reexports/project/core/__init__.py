from ._impl.engine import LIMIT, Engine, configure, run
from ._impl.util import *

__all__ = ["Engine", "LIMIT", "chunked", "configure", "flatten", "run"]
