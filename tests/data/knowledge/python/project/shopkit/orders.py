from shopkit import pricing
from shopkit.inventory import Inventory
from shopkit.util.ids import next_id


class Order:
    def __init__(self, oid, customer, total):
        self.oid = oid
        self.customer = customer
        self.total = total
        self.paid = False

    def mark_paid(self):
        self.paid = True


class OrderService:
    def __init__(self):
        self.log = []

    def place(self, cart, customer):
        raise NotImplementedError

    def _audit(self, message):
        self.log.append(message)


class StandardOrderService(OrderService):
    def __init__(self, inventory=None):
        super().__init__()
        self.inventory = inventory or Inventory()

    def place(self, cart, customer):
        if not self.inventory.reserve(cart):
            self._audit("out of stock for " + customer.display())
            return None
        total = pricing.price_cart(cart, customer)
        order = Order(next_id("order"), customer, total)
        self._audit("placed " + order.oid)
        return order
