from shopkit.discounts import Discount, PercentDiscount


class WinterPromotion(Discount):
    def __init__(self):
        self.inner = PercentDiscount(25)

    def apply(self, subtotal):
        return self.inner.apply(subtotal) if self.eligible(subtotal) else subtotal

    def eligible(self, subtotal):
        return subtotal.cents > 3000

    def describe(self):
        return "Winter: " + self.inner.describe()
