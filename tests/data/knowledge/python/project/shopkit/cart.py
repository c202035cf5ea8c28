from shopkit.catalog import Product
from shopkit.money import Money as M, ZERO


class CartItem:
    def __init__(self, product: Product, quantity):
        self.product = product
        self.quantity = quantity

    def add(self, more):
        self.quantity += more

    def line_total(self):
        return self.product.price.times(self.quantity)


class Cart:
    def __init__(self):
        self.items = []

    def add(self, product, quantity=1):
        for item in self.items:
            if item.product.sku == product.sku:
                item.add(quantity)
                return
        self.items.append(CartItem(product, quantity))

    def remove(self, sku):
        self.items = [item for item in self.items if item.product.sku != sku]

    def subtotal(self):
        total = M(0)
        for item in self.items:
            total = total.plus(item.line_total())
        return total

    def total(self, discount=None):
        subtotal = self.subtotal()
        if discount is None:
            return subtotal
        return discount.apply(subtotal)

    def size(self):
        return len(self.items)

    def is_empty(self):
        return self.size() == 0 or self.subtotal() == ZERO
