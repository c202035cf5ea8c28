from facade import *
from facade import run as go
import core.util_names as names
