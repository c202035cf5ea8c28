package com.shopkit.promo;

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
