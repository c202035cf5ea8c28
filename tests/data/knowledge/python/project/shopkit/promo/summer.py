from shopkit.discounts import Discount, PercentDiscount


class SummerPromotion(Discount):
    def __init__(self):
        self.inner = PercentDiscount(15)

    def apply(self, subtotal):
        return self.inner.apply(subtotal) if self.eligible(subtotal) else subtotal

    def eligible(self, subtotal):
        return subtotal.cents > 2000

    def describe(self):
        return "Summer: " + self.inner.describe()
