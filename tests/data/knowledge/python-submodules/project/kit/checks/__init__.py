from . import numeric, text
from .numeric import positive
