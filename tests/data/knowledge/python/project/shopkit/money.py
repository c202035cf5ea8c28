"""Money in cents."""


class Money:
    def __init__(self, cents):
        self.cents = cents

    @classmethod
    def of(cls, cents):
        return cls(cents)

    def plus(self, other):
        return Money(self.cents + other.cents)

    def times(self, factor):
        return Money(self.cents * factor)

    def is_zero(self):
        return self.cents == 0

    def __repr__(self):
        return "Money(%d) plus times" % self.cents


ZERO = Money(0)


def format_money(money):
    # format_money is documented in the README; cents are shown with two digits
    return "%d.%02d" % (money.cents // 100, money.cents % 100)
