from shopkit.money import Money, ZERO

FOOD = "food"
BOOKS = "books"
TAX_PERCENT = {FOOD: 5, BOOKS: 0}


class Product:
    def __init__(self, sku, name, price: Money, category=FOOD):
        self.sku = sku
        self.name = name
        self.price = price
        self.category = category

    def price_with_tax(self):
        percent = TAX_PERCENT.get(self.category, 10)
        return self.price.plus(self.price.times(percent / 100))

    def is_tax_free(self):
        return self.category == BOOKS

    def with_price(self, price):
        return Product(self.sku, self.name, price, self.category)


def find_product(products, sku):
    for product in products:
        if product.sku == sku:
            return product
    return None


def free_product(sku, name) -> Product:
    return Product(sku, name, ZERO)
