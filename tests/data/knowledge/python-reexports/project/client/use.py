import core
import core as c
import facade
import top
from facade import Engine as E
from facade import run
from top import flatten


def main(jobs):
    core.run(jobs)
    facade.run(jobs)
    run(jobs)
    c.run(jobs)
    top.go(jobs)
    top.run(jobs)
    engine = core.Engine()
    engine.start()
    facade.Engine().stop()
    E().start()
    top.Engine().stop()
    core.configure(debug=True)
    facade.setup(debug=False)
    flatten(jobs)
    core.flatten(jobs)
    c.chunked(jobs, 2)
    top.names.split_up(jobs, 3)
    return core.LIMIT + facade.LIMIT + top.LIMIT
