package com.shopkit.service;

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
