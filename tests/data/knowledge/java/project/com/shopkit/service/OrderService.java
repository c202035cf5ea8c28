package com.shopkit.service;

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
