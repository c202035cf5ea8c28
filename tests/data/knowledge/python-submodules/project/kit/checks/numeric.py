def positive(value):
    return value > 0


class Range:
    def __init__(self, low, high):
        self.low = low
        self.high = high

    def contains(self, value):
        return self.low <= value <= self.high
