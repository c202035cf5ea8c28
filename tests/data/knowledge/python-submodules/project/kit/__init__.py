from . import hooks
from .checks import numeric
from .registry import register

strict = register
