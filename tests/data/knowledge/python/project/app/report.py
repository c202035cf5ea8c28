from shopkit.cart import Cart
from shopkit.discounts import Discount
from shopkit.pricing import tax_for
from shopkit.util.ids import issued
from shopkit.util.strings import pad_left


class Report:
    def __init__(self, cart: Cart):
        self.cart = cart
        self.total = 0

    def names(self):
        return [item.product.name for item in self.cart.items]

    def render(self):
        lines = []
        subtotal = self.cart.subtotal()
        total = 0
        for item in self.cart.items:
            total = total + item.quantity
            lines.append(pad_left(item.product.name, 20))
            lines.append(str(item.line_total()))
            lines.append(str(tax_for(item.product)))
        self.total = total
        none = Discount()
        lines.append(str(none.apply(subtotal)) + none.describe())
        lines.append(str(issued()))
        return "\n".join(lines)


def summarize(cart):
    report = Report(cart)
    text = report.render()
    return text + str(report.total)
