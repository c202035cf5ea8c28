def pad_left(text, width):
    return " " * max(0, width - len(text)) + text


def is_blank(text):
    return text is None or not text.strip()
