from deco import asdict, field, quick
from app import models


@quick
class Pair:
    left = field()
    right = field(default=1)


def show(pair):
    return asdict(pair), models.dump(pair), models.deco.short
