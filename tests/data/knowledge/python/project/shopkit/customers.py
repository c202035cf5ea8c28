class Customer:
    def __init__(self, cid, name, premium=False):
        self.cid = cid
        self.name = name
        self.premium = premium

    def display(self):
        return "%s (%s)" % (self.name, self.cid)


def make_customer(name) -> Customer:
    return Customer(name.lower(), name)


GUEST = make_customer("Guest")
