package com.shopkit.app;

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
