from core import chunked as split_up
