from shopkit.discounts import Discount, PercentDiscount


class SpringPromotion(Discount):
    def __init__(self):
        self.inner = PercentDiscount(5)

    def apply(self, subtotal):
        return self.inner.apply(subtotal) if self.eligible(subtotal) else subtotal

    def eligible(self, subtotal):
        return subtotal.cents > 1000

    def describe(self):
        return "Spring: " + self.inner.describe()
