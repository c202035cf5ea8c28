from shopkit.money import Money, ZERO


class Discount:
    def apply(self, subtotal):
        return subtotal

    def describe(self):
        return "no discount"


class PercentDiscount(Discount):
    def __init__(self, percent):
        self.percent = percent

    def apply(self, subtotal):
        return subtotal.times((100 - self.percent) / 100)

    def describe(self):
        return "%d%% off" % self.percent


class FixedDiscount(Discount):
    def __init__(self, amount: Money):
        self.amount = amount

    def apply(self, subtotal):
        if subtotal.cents < self.amount.cents:
            return ZERO
        return Money(subtotal.cents - self.amount.cents)
