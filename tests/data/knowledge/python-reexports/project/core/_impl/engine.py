class Engine:
    def start(self):
        return self

    def stop(self):
        return None


def run(job):
    return Engine().start()


def configure(**options):
    return options


LIMIT = 10
