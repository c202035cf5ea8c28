from shopkit.promo.spring import SpringPromotion
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
