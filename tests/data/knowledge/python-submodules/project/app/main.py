import kit
import kit.checks.text
from kit import checks, hooks
from kit.checks import numeric as num


@kit.register(hook=kit.hooks.check)
def first(value):
    return kit.hooks.before(value)


@kit.strict(hook=kit.checks.numeric.positive, when=kit.hooks.TIMEOUT)
def second(value):
    return kit.checks.positive(value) and kit.numeric.positive(value)


@kit.register(hook=checks.text.non_empty)
def third(value):
    return kit.checks.text.non_empty(value) and hooks.check(value)


def fourth(value):
    span = kit.checks.numeric.Range(0, 10)
    other = num.Range(1, 2)
    return span.contains(value) and other.contains(value) and num.positive(value)
