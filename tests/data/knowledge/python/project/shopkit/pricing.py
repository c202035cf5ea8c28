from shopkit.catalog import Product
from shopkit.discounts import PercentDiscount
from shopkit.money import ZERO

TAX_RATE = 0.2


def tax_for(product: Product):
    if product.is_tax_free():
        return ZERO
    return product.price.times(TAX_RATE)


def price_cart(cart, customer):
    discount = PercentDiscount(10) if customer.premium else None
    total = cart.total(discount)
    for item in cart.items:
        total = total.plus(tax_for(item.product).times(item.quantity))
    return total
