#!/usr/bin/env python3
"""Generates the synthetic Java and Python "shopkit" projects that measure
lib/knowledge, and the query list for each (a declaration per query).

Usage: tools/knowledge/generate_fixtures.py [OUT]   (default tests/data/knowledge)

The projects are written from templates (deterministic: no randomness), in
the spirit of the spec's template project: packages, inheritance and
overrides, overloads, constructors through this/super and enum constants,
records and accessors, imports and aliases, name collisions between
unrelated classes, locals that shadow fields and globals, and names inside
comments and strings. One statement per line, so a path:line site is one
reference."""
import json
import os
import sys

JAVA = {}
PY = {}

JAVA["com/shopkit/model/Money.java"] = """package com.shopkit.model;

/** Money in cents. The words plus, times and cents in this comment are not references. */
public final class Money {
  public static final Money ZERO = new Money(0);
  private final long cents;

  public Money(long cents) {
    this.cents = cents;
  }

  public Money(long units, int cents) {
    this(units * 100 + cents);
  }

  public static Money of(long cents) {
    return new Money(cents);
  }

  public long cents() {
    return cents;
  }

  public Money plus(Money other) {
    return new Money(cents + other.cents);
  }

  public Money times(int factor) {
    return new Money(cents * factor);
  }

  public Money times(int numerator, int denominator) {
    return new Money(cents * numerator / denominator);
  }

  public boolean isZero() {
    return cents == 0;
  }

  @Override
  public String toString() {
    return "Money(" + cents + ") plus times";
  }
}
"""

JAVA["com/shopkit/model/Category.java"] = """package com.shopkit.model;

public enum Category {
  FOOD("food", 5),
  BOOKS("books", 0),
  TOYS("toys", 20),
  OTHER;

  private final String label;
  private final int taxPercent;

  Category(String label, int taxPercent) {
    this.label = label;
    this.taxPercent = taxPercent;
  }

  Category() {
    this("other", 10);
  }

  public String label() {
    return label;
  }

  public int taxPercent() {
    return taxPercent;
  }
}
"""

JAVA["com/shopkit/model/Product.java"] = """package com.shopkit.model;

public class Product {
  private final String sku;
  private final String name;
  private final Money price;
  private final Category category;

  public Product(String sku, String name, Money price, Category category) {
    this.sku = sku;
    this.name = name;
    this.price = price;
    this.category = category;
  }

  public String getSku() {
    return sku;
  }

  public String getName() {
    return name;
  }

  public Money getPrice() {
    return price;
  }

  public Category getCategory() {
    return category;
  }

  public Product withPrice(Money price) {
    return new Product(sku, name, price, category);
  }

  public boolean isTaxFree() {
    return category == Category.BOOKS;
  }
}
"""

JAVA["com/shopkit/model/Customer.java"] = """package com.shopkit.model;

public record Customer(String id, String name, boolean premium) {
  public String display() {
    return name + " (" + id + ")";
  }

  public static Customer guest() {
    return new Customer("guest", "Guest", false);
  }
}
"""

JAVA["com/shopkit/cart/Discount.java"] = """package com.shopkit.cart;

import com.shopkit.model.Money;

public interface Discount {
  Money apply(Money subtotal);

  String describe();
}
"""

JAVA["com/shopkit/cart/PercentDiscount.java"] = """package com.shopkit.cart;

import com.shopkit.model.Money;

public class PercentDiscount implements Discount {
  private final int percent;

  public PercentDiscount(int percent) {
    this.percent = percent;
  }

  @Override
  public Money apply(Money subtotal) {
    return subtotal.times(100 - percent, 100);
  }

  @Override
  public String describe() {
    return percent + "% off";
  }
}
"""

JAVA["com/shopkit/cart/FixedDiscount.java"] = """package com.shopkit.cart;

import com.shopkit.model.Money;

public class FixedDiscount implements Discount {
  private final Money amount;

  public FixedDiscount(Money amount) {
    this.amount = amount;
  }

  @Override
  public Money apply(Money subtotal) {
    if (subtotal.cents() < amount.cents()) {
      return Money.ZERO;
    }
    return Money.of(subtotal.cents() - amount.cents());
  }

  @Override
  public String describe() {
    return amount + " off";
  }
}
"""

JAVA["com/shopkit/cart/CartItem.java"] = """package com.shopkit.cart;

import com.shopkit.model.Money;
import com.shopkit.model.Product;

public class CartItem {
  private final Product product;
  private int quantity;

  public CartItem(Product product, int quantity) {
    this.product = product;
    this.quantity = quantity;
  }

  public Product getProduct() {
    return product;
  }

  public int getQuantity() {
    return quantity;
  }

  public void add(int more) {
    quantity = quantity + more;
  }

  public Money lineTotal() {
    return product.getPrice().times(quantity);
  }
}
"""

JAVA["com/shopkit/cart/Cart.java"] = """package com.shopkit.cart;

import com.shopkit.model.Money;
import com.shopkit.model.Product;
import java.util.ArrayList;
import java.util.List;

public class Cart {
  private final List<CartItem> items = new ArrayList<>();

  public void add(Product product) {
    add(product, 1);
  }

  public void add(Product product, int quantity) {
    for (CartItem item : items) {
      if (item.getProduct().getSku().equals(product.getSku())) {
        item.add(quantity);
        return;
      }
    }
    items.add(new CartItem(product, quantity));
  }

  public boolean remove(String sku) {
    return items.removeIf(item -> item.getProduct().getSku().equals(sku));
  }

  public Money subtotal() {
    Money sum = Money.ZERO;
    for (CartItem item : items) {
      sum = sum.plus(item.lineTotal());
    }
    return sum;
  }

  public Money total(Discount discount) {
    Money subtotal = subtotal();
    return discount == null ? subtotal : discount.apply(subtotal);
  }

  public List<CartItem> items() {
    return items;
  }

  public int size() {
    return items.size();
  }
}
"""

JAVA["com/shopkit/service/Repository.java"] = """package com.shopkit.service;

import java.util.List;

public interface Repository<T> {
  T find(String id);

  void save(String id, T item);

  List<T> all();
}
"""

JAVA["com/shopkit/service/InMemoryProductRepository.java"] = """package com.shopkit.service;

import com.shopkit.model.Product;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class InMemoryProductRepository implements Repository<Product> {
  private final Map<String, Product> products = new HashMap<>();

  @Override
  public Product find(String id) {
    return products.get(id);
  }

  @Override
  public void save(String id, Product item) {
    products.put(id, item);
  }

  @Override
  public List<Product> all() {
    return new ArrayList<>(products.values());
  }
}
"""

JAVA["com/shopkit/service/InventoryService.java"] = """package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import java.util.HashMap;
import java.util.Map;

public class InventoryService {
  private final Map<String, Integer> stock = new HashMap<>();

  public void add(String sku, int quantity) {
    stock.merge(sku, quantity, Integer::sum);
  }

  public int available(String sku) {
    return stock.getOrDefault(sku, 0);
  }

  public boolean reserve(Cart cart) {
    for (CartItem item : cart.items()) {
      if (available(item.getProduct().getSku()) < item.getQuantity()) {
        return false;
      }
    }
    for (CartItem item : cart.items()) {
      add(item.getProduct().getSku(), -item.getQuantity());
    }
    return true;
  }
}
"""

JAVA["com/shopkit/service/PricingService.java"] = """package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Customer;
import com.shopkit.model.Money;
import com.shopkit.model.Product;

public class PricingService {
  public static Money taxFor(Product product) {
    if (product.isTaxFree()) {
      return Money.ZERO;
    }
    return product.getPrice().times(product.getCategory().taxPercent(), 100);
  }

  public Money price(Cart cart, Customer customer) {
    Discount discount = customer.premium() ? new PercentDiscount(10) : null;
    Money total = cart.total(discount);
    for (CartItem item : cart.items()) {
      total = total.plus(taxFor(item.getProduct()).times(item.getQuantity()));
    }
    return total;
  }
}
"""

JAVA["com/shopkit/service/Order.java"] = """package com.shopkit.service;

import com.shopkit.model.Customer;
import com.shopkit.model.Money;

public class Order {
  public enum Status {
    NEW,
    PAID
  }

  private final String id;
  private final Customer customer;
  private final Money total;
  private Status status = Status.NEW;

  public Order(String id, Customer customer, Money total) {
    this.id = id;
    this.customer = customer;
    this.total = total;
  }

  public String getId() {
    return id;
  }

  public Money getTotal() {
    return total;
  }

  public Customer getCustomer() {
    return customer;
  }

  public void markPaid() {
    status = Status.PAID;
  }

  public Status getStatus() {
    return status;
  }
}
"""

JAVA["com/shopkit/service/OrderService.java"] = """package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.model.Customer;
import java.util.ArrayList;
import java.util.List;

public abstract class OrderService {
  private final List<String> log = new ArrayList<>();

  public abstract Order place(Cart cart, Customer customer);

  protected void audit(String message) {
    log.add(message);
  }

  public List<String> log() {
    return log;
  }
}
"""

JAVA["com/shopkit/service/StandardOrderService.java"] = """package com.shopkit.service;

import com.shopkit.cart.Cart;
import com.shopkit.model.Customer;
import com.shopkit.model.Money;
import com.shopkit.util.Ids;

public class StandardOrderService extends OrderService {
  private final PricingService pricing;
  private final InventoryService inventory;

  public StandardOrderService(PricingService pricing, InventoryService inventory) {
    this.pricing = pricing;
    this.inventory = inventory;
  }

  public StandardOrderService() {
    this(new PricingService(), new InventoryService());
  }

  @Override
  public Order place(Cart cart, Customer customer) {
    if (!inventory.reserve(cart)) {
      audit("out of stock for " + customer.display());
      return null;
    }
    Money total = pricing.price(cart, customer);
    Order order = new Order(Ids.next("order"), customer, total);
    audit("placed " + order.getId());
    return order;
  }
}
"""

JAVA["com/shopkit/util/Strings.java"] = """package com.shopkit.util;

public final class Strings {
  private Strings() {}

  public static String padLeft(String text, int width) {
    StringBuilder out = new StringBuilder();
    for (int i = text.length(); i < width; i++) {
      out.append(' ');
    }
    return out.append(text).toString();
  }

  public static boolean isBlank(String text) {
    return text == null || text.trim().isEmpty();
  }
}
"""

JAVA["com/shopkit/util/Ids.java"] = """package com.shopkit.util;

public final class Ids {
  private static int counter;

  private Ids() {}

  public static String next(String prefix) {
    counter = counter + 1;
    return prefix + "-" + counter;
  }

  public static int issued() {
    return counter;
  }
}
"""

JAVA["com/shopkit/app/Main.java"] = """package com.shopkit.app;

import static com.shopkit.util.Strings.padLeft;

import com.shopkit.cart.Cart;
import com.shopkit.cart.FixedDiscount;
import com.shopkit.model.Category;
import com.shopkit.model.Customer;
import com.shopkit.model.Money;
import com.shopkit.model.Product;
import com.shopkit.service.InMemoryProductRepository;
import com.shopkit.service.InventoryService;
import com.shopkit.service.Order;
import com.shopkit.service.OrderService;
import com.shopkit.service.StandardOrderService;
import com.shopkit.util.Strings;

public class Main {
  public static void main(String[] args) {
    InMemoryProductRepository repository = new InMemoryProductRepository();
    repository.save("apple", new Product("apple", "Apple", Money.of(50), Category.FOOD));
    repository.save("novel", new Product("novel", "Novel", new Money(12, 99), Category.BOOKS));
    repository.save("robot", new Product("robot", "Robot", Money.of(4000), Category.TOYS));
    InventoryService inventory = new InventoryService();
    for (Product product : repository.all()) {
      inventory.add(product.getSku(), 10);
    }
    Cart cart = new Cart();
    cart.add(repository.find("apple"), 3);
    cart.add(repository.find("novel"));
    // cart.add(robot) is not called: this comment mentions add and total.
    String note = "cart.total(discount) and Money.of(1) in a string";
    Customer customer = new Customer("c1", "Ada", true);
    OrderService service = new StandardOrderService();
    Order order = service.place(cart, customer);
    Money total = order == null ? Money.ZERO : order.getTotal();
    System.out.println(padLeft(customer.name(), 12) + " " + total + note);
    System.out.println(Strings.isBlank(customer.display()) ? "?" : customer.id());
    System.out.println(new FixedDiscount(Money.of(100)).apply(cart.subtotal()));
  }
}
"""

JAVA["com/shopkit/app/Report.java"] = """package com.shopkit.app;

import com.shopkit.cart.Cart;
import com.shopkit.cart.CartItem;
import com.shopkit.cart.Discount;
import com.shopkit.model.Money;
import com.shopkit.model.Product;
import com.shopkit.service.PricingService;
import com.shopkit.util.Ids;
import com.shopkit.util.Strings;
import java.util.List;
import java.util.stream.Collectors;

public class Report {
  private final Cart cart;
  private int total;

  public Report(Cart cart) {
    this.cart = cart;
  }

  public List<String> names() {
    return cart.items().stream().map(CartItem::getProduct).map(Product::getName).collect(Collectors.toList());
  }

  public String render() {
    var builder = new StringBuilder();
    var subtotal = cart.subtotal();
    int total = 0;
    for (CartItem item : cart.items()) {
      total = total + item.getQuantity();
      builder.append(Strings.padLeft(item.getProduct().getName(), 20));
      builder.append(item.lineTotal());
      builder.append(PricingService.taxFor(item.getProduct()));
    }
    this.total = total;
    Discount none = new Discount() {
      @Override
      public Money apply(Money amount) {
        return amount;
      }

      @Override
      public String describe() {
        return "none";
      }
    };
    builder.append(none.apply(subtotal)).append(none.describe());
    builder.append(Ids.issued());
    return builder.toString();
  }

  public int total() {
    return total;
  }
}
"""

# Promotions: generated variations of one shape, each overriding apply and
# describe, with a helper whose name collides across the classes.
for n, (name, pct) in enumerate([("Spring", 5), ("Summer", 15), ("Winter", 25), ("Member", 8)]):
    JAVA[f"com/shopkit/promo/{name}Promotion.java"] = f"""package com.shopkit.promo;

import com.shopkit.cart.Discount;
import com.shopkit.cart.PercentDiscount;
import com.shopkit.model.Money;

public class {name}Promotion implements Discount {{
  private final PercentDiscount inner = new PercentDiscount({pct});

  @Override
  public Money apply(Money subtotal) {{
    return eligible(subtotal) ? inner.apply(subtotal) : subtotal;
  }}

  private boolean eligible(Money subtotal) {{
    return subtotal.cents() > {1000 * (n + 1)};
  }}

  @Override
  public String describe() {{
    return "{name}: " + inner.describe();
  }}
}}
"""

JAVA["com/shopkit/promo/Promotions.java"] = """package com.shopkit.promo;

import com.shopkit.cart.Cart;
import com.shopkit.cart.Discount;
import com.shopkit.model.Money;
import java.util.List;

public final class Promotions {
  private Promotions() {}

  public static List<Discount> all() {
    return List.of(new SpringPromotion(), new SummerPromotion(), new WinterPromotion(), new MemberPromotion());
  }

  public static Money best(Cart cart) {
    Money best = cart.subtotal();
    for (Discount discount : all()) {
      Money candidate = discount.apply(cart.subtotal());
      if (candidate.cents() < best.cents()) {
        best = candidate;
      }
    }
    return best;
  }
}
"""

# (file, a unique piece of the declaration's line, the declared name)
JAVA_QUERIES = [
    ("com/shopkit/model/Money.java", "public final class Money", "Money"),
    ("com/shopkit/model/Money.java", "public Money(long cents)", "Money"),
    ("com/shopkit/model/Money.java", "public Money(long units, int cents)", "Money"),
    ("com/shopkit/model/Money.java", "public static Money of(", "of"),
    ("com/shopkit/model/Money.java", "public long cents()", "cents"),
    ("com/shopkit/model/Money.java", "private final long cents", "cents"),
    ("com/shopkit/model/Money.java", "public Money plus(", "plus"),
    ("com/shopkit/model/Money.java", "public Money times(int factor)", "times"),
    ("com/shopkit/model/Money.java", "public Money times(int numerator", "times"),
    ("com/shopkit/model/Money.java", "public static final Money ZERO", "ZERO"),
    ("com/shopkit/model/Category.java", "FOOD(", "FOOD"),
    ("com/shopkit/model/Category.java", "Category(String label", "Category"),
    ("com/shopkit/model/Category.java", "public int taxPercent()", "taxPercent"),
    ("com/shopkit/model/Product.java", "public Product(String sku", "Product"),
    ("com/shopkit/model/Product.java", "public String getName()", "getName"),
    ("com/shopkit/model/Product.java", "public Money getPrice()", "getPrice"),
    ("com/shopkit/model/Product.java", "public String getSku()", "getSku"),
    ("com/shopkit/model/Product.java", "private final Money price", "price"),
    ("com/shopkit/model/Customer.java", "public String display()", "display"),
    ("com/shopkit/model/Customer.java", "public record Customer", "Customer"),
    ("com/shopkit/cart/Discount.java", "Money apply(", "apply"),
    ("com/shopkit/cart/PercentDiscount.java", "public Money apply(", "apply"),
    ("com/shopkit/cart/Discount.java", "String describe()", "describe"),
    ("com/shopkit/cart/CartItem.java", "public Money lineTotal()", "lineTotal"),
    ("com/shopkit/cart/CartItem.java", "public void add(int more)", "add"),
    ("com/shopkit/cart/CartItem.java", "private int quantity", "quantity"),
    ("com/shopkit/cart/Cart.java", "public void add(Product product)", "add"),
    ("com/shopkit/cart/Cart.java", "public void add(Product product, int quantity)", "add"),
    ("com/shopkit/cart/Cart.java", "public Money subtotal()", "subtotal"),
    ("com/shopkit/cart/Cart.java", "public Money total(", "total"),
    ("com/shopkit/cart/Cart.java", "public List<CartItem> items()", "items"),
    ("com/shopkit/service/InventoryService.java", "public void add(String sku", "add"),
    ("com/shopkit/service/InventoryService.java", "public boolean reserve(", "reserve"),
    ("com/shopkit/service/PricingService.java", "public static Money taxFor(", "taxFor"),
    ("com/shopkit/service/OrderService.java", "public abstract Order place(", "place"),
    ("com/shopkit/service/OrderService.java", "protected void audit(", "audit"),
    ("com/shopkit/service/Order.java", "public Money getTotal()", "getTotal"),
    ("com/shopkit/service/Repository.java", "T find(", "find"),
    ("com/shopkit/service/InMemoryProductRepository.java", "public Product find(", "find"),
    ("com/shopkit/util/Strings.java", "public static String padLeft(", "padLeft"),
    ("com/shopkit/util/Strings.java", "public static boolean isBlank(", "isBlank"),
    ("com/shopkit/util/Ids.java", "public static String next(", "next"),
    ("com/shopkit/util/Ids.java", "private static int counter", "counter"),
    ("com/shopkit/app/Report.java", "private int total", "total"),
]

PY["shopkit/__init__.py"] = '''"""shopkit: a tiny shop. Money, Cart and add are mentioned here only."""
from .money import Money
'''

PY["shopkit/money.py"] = '''"""Money in cents."""


class Money:
    def __init__(self, cents):
        self.cents = cents

    @classmethod
    def of(cls, cents):
        return cls(cents)

    def plus(self, other):
        return Money(self.cents + other.cents)

    def times(self, factor):
        return Money(self.cents * factor)

    def is_zero(self):
        return self.cents == 0

    def __repr__(self):
        return "Money(%d) plus times" % self.cents


ZERO = Money(0)


def format_money(money):
    # format_money is documented in the README; cents are shown with two digits
    return "%d.%02d" % (money.cents // 100, money.cents % 100)
'''

PY["shopkit/catalog.py"] = '''from shopkit.money import Money, ZERO

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
'''

PY["shopkit/customers.py"] = '''class Customer:
    def __init__(self, cid, name, premium=False):
        self.cid = cid
        self.name = name
        self.premium = premium

    def display(self):
        return "%s (%s)" % (self.name, self.cid)


def make_customer(name) -> Customer:
    return Customer(name.lower(), name)


GUEST = make_customer("Guest")
'''

PY["shopkit/discounts.py"] = '''from shopkit.money import Money, ZERO


class Discount:
    def apply(self, subtotal):
        return subtotal

    def describe(self):
        return "no discount"


class PercentDiscount(Discount):
    def __init__(self, percent):
        self.percent = percent

    def apply(self, subtotal):
        return subtotal.times((100 - self.percent) / 100)

    def describe(self):
        return "%d%% off" % self.percent


class FixedDiscount(Discount):
    def __init__(self, amount: Money):
        self.amount = amount

    def apply(self, subtotal):
        if subtotal.cents < self.amount.cents:
            return ZERO
        return Money(subtotal.cents - self.amount.cents)
'''

PY["shopkit/cart.py"] = '''from shopkit.catalog import Product
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
'''

PY["shopkit/inventory.py"] = '''class Inventory:
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
'''

PY["shopkit/pricing.py"] = '''from shopkit.catalog import Product
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
'''

PY["shopkit/orders.py"] = '''from shopkit import pricing
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
'''

PY["shopkit/util/__init__.py"] = ""

PY["shopkit/util/strings.py"] = '''def pad_left(text, width):
    return " " * max(0, width - len(text)) + text


def is_blank(text):
    return text is None or not text.strip()
'''

PY["shopkit/util/ids.py"] = '''_counter = 0


def next_id(prefix):
    global _counter
    _counter = _counter + 1
    return "%s-%d" % (prefix, _counter)


def issued():
    return _counter
'''

PY["app/__init__.py"] = ""

PY["app/main.py"] = '''import shopkit.pricing as pricing
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
'''

PY["app/report.py"] = '''from shopkit.cart import Cart
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
        return "\\n".join(lines)


def summarize(cart):
    report = Report(cart)
    text = report.render()
    return text + str(report.total)
'''

for n, (name, pct) in enumerate([("Spring", 5), ("Summer", 15), ("Winter", 25), ("Member", 8)]):
    PY[f"shopkit/promo/{name.lower()}.py"] = f'''from shopkit.discounts import Discount, PercentDiscount


class {name}Promotion(Discount):
    def __init__(self):
        self.inner = PercentDiscount({pct})

    def apply(self, subtotal):
        return self.inner.apply(subtotal) if self.eligible(subtotal) else subtotal

    def eligible(self, subtotal):
        return subtotal.cents > {1000 * (n + 1)}

    def describe(self):
        return "{name}: " + self.inner.describe()
'''

PY["shopkit/promo/__init__.py"] = '''from shopkit.promo.spring import SpringPromotion
from shopkit.promo.summer import SummerPromotion
from shopkit.promo.winter import WinterPromotion
from shopkit.promo.member import MemberPromotion


def all_promotions():
    return [SpringPromotion(), SummerPromotion(), WinterPromotion(), MemberPromotion()]


def best(cart):
    best_total = cart.subtotal()
    for discount in all_promotions():
        candidate = discount.apply(cart.subtotal())
        if candidate.cents < best_total.cents:
            best_total = candidate
    return best_total
'''

PY_QUERIES = [
    ("shopkit/money.py", "class Money", "Money"),
    ("shopkit/money.py", "def of(", "of"),
    ("shopkit/money.py", "def plus(", "plus"),
    ("shopkit/money.py", "def times(", "times"),
    ("shopkit/money.py", "def is_zero(", "is_zero"),
    ("shopkit/money.py", "self.cents = cents", "cents"),
    ("shopkit/money.py", "ZERO = Money(0)", "ZERO"),
    ("shopkit/money.py", "def format_money(", "format_money"),
    ("shopkit/catalog.py", "class Product", "Product"),
    ("shopkit/catalog.py", "def price_with_tax(", "price_with_tax"),
    ("shopkit/catalog.py", "def is_tax_free(", "is_tax_free"),
    ("shopkit/catalog.py", "self.price = price", "price"),
    ("shopkit/catalog.py", "self.sku = sku", "sku"),
    ("shopkit/catalog.py", "def find_product(", "find_product"),
    ("shopkit/catalog.py", 'BOOKS = "books"', "BOOKS"),
    ("shopkit/customers.py", "class Customer", "Customer"),
    ("shopkit/customers.py", "def display(", "display"),
    ("shopkit/customers.py", "def make_customer(", "make_customer"),
    ("shopkit/discounts.py", "class Discount", "Discount"),
    ("shopkit/discounts.py", "class PercentDiscount", "PercentDiscount"),
    ("shopkit/discounts.py", "    def describe(self):\n        return \"no", "describe"),
    ("shopkit/cart.py", "class CartItem", "CartItem"),
    ("shopkit/cart.py", "def line_total(", "line_total"),
    ("shopkit/cart.py", "class Cart:", "Cart"),
    ("shopkit/cart.py", "def add(self, product", "add"),
    ("shopkit/cart.py", "def subtotal(", "subtotal"),
    ("shopkit/cart.py", "def total(", "total"),
    ("shopkit/cart.py", "self.items = []", "items"),
    ("shopkit/cart.py", "def size(", "size"),
    ("shopkit/inventory.py", "def add(", "add"),
    ("shopkit/inventory.py", "def reserve(", "reserve"),
    ("shopkit/inventory.py", "def available(", "available"),
    ("shopkit/pricing.py", "def tax_for(", "tax_for"),
    ("shopkit/pricing.py", "def price_cart(", "price_cart"),
    ("shopkit/pricing.py", "TAX_RATE = 0.2", "TAX_RATE"),
    ("shopkit/orders.py", "def _audit(", "_audit"),
    ("shopkit/orders.py", "class StandardOrderService", "StandardOrderService"),
    ("shopkit/util/strings.py", "def pad_left(", "pad_left"),
    ("shopkit/util/strings.py", "def is_blank(", "is_blank"),
    ("shopkit/util/ids.py", "def next_id(", "next_id"),
    ("shopkit/util/ids.py", "_counter = 0", "_counter"),
    ("app/report.py", "class Report", "Report"),
]


def locate(files, path, marker, name):
    text = files[path]
    at = text.find(marker)
    if at < 0 or text.find(marker, at + 1) >= 0:
        raise SystemExit(f"marker {marker!r} in {path}: not found exactly once")
    column = text.find(name, at) - at
    line_start = text.rfind("\n", 0, at) + 1
    line = text.count("\n", 0, at) + 1
    byte_column = len(text[line_start:at + column].encode()) + 1
    return {"path": path, "line": line, "column": byte_column, "name": name}


def write(out, language, files, queries):
    root = os.path.join(out, language, "project")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    listed = [dict(id=f"{language}-{i + 1:02d}", **locate(files, *q))
              for i, q in enumerate(queries)]
    with open(os.path.join(out, language, "queries.json"), "w") as f:
        json.dump({"language": language, "queries": listed}, f, indent=1)
        f.write("\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "knowledge")
    write(out, "java", JAVA, JAVA_QUERIES)
    write(out, "python", PY, PY_QUERIES)


if __name__ == "__main__":
    main()
