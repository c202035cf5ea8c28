package com.shopkit.service;

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
