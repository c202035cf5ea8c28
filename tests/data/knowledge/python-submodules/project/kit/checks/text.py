def non_empty(value):
    return bool(value)
