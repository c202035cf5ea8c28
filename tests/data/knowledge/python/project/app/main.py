import shopkit.pricing as pricing
from shopkit.cart import Cart
from shopkit.catalog import Product, BOOKS, find_product
from shopkit.customers import Customer, make_customer
from shopkit.discounts import FixedDiscount
from shopkit.inventory import Inventory
from shopkit.money import Money, format_money
from shopkit.orders import StandardOrderService
from shopkit.util import strings
from shopkit.util.strings import pad_left as pad


def build_catalog():
    return [Product("apple", "Apple", Money.of(50)), Product("novel", "Novel", Money(1299), BOOKS)]


def run():
    products = build_catalog()
    inventory = Inventory()
    for product in products:
        inventory.add(product.sku, 10)
    cart = Cart()
    cart.add(find_product(products, "apple"), 3)
    cart.add(find_product(products, "novel"))
    # cart.add(robot) is not called: this comment mentions add and total.
    note = "cart.total(discount) and Money.of(1) in a string"
    customer = Customer("c1", "Ada", premium=True)
    service = StandardOrderService(inventory)
    order = service.place(cart, customer)
    total = order.total if order else pricing.price_cart(cart, make_customer("x"))
    print(pad(customer.name, 12), format_money(total), note)
    print(strings.is_blank(customer.display()))
    print(FixedDiscount(Money.of(100)).apply(cart.subtotal()))


def add(a, b):
    total = a + b
    return total


if __name__ == "__main__":
    run()
