package com.shopkit.cart;

import com.shopkit.model.Money;

public interface Discount {
  Money apply(Money subtotal);

  String describe();
}
