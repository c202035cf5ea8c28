from core import Engine, flatten, run
from core import configure as setup
from core import LIMIT
