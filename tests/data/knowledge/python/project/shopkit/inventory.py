class Inventory:
    def __init__(self):
        self.stock = {}

    def add(self, sku, quantity):
        self.stock[sku] = self.stock.get(sku, 0) + quantity

    def available(self, sku):
        return self.stock.get(sku, 0)

    def reserve(self, cart):
        for item in cart.items:
            if self.available(item.product.sku) < item.quantity:
                return False
        for item in cart.items:
            self.add(item.product.sku, -item.quantity)
        return True
