from shopkit.discounts import Discount, PercentDiscount


class MemberPromotion(Discount):
    def __init__(self):
        self.inner = PercentDiscount(8)

    def apply(self, subtotal):
        return self.inner.apply(subtotal) if self.eligible(subtotal) else subtotal

    def eligible(self, subtotal):
        return subtotal.cents > 4000

    def describe(self):
        return "Member: " + self.inner.describe()
