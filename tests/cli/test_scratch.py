import time
import pytest
pytestmark = pytest.mark.django_db
from tests.cli.conftest import as_user

def test_scratch(demo_server):
    t=time.time()
    for args in (["shares"], ["why", demo_server.alice_workload[0]], ["pending", "--queue", "team-vision/training"], ["budgets"]):
        r = as_user(demo_server, "alice", *args)
        print(args, r.code, r.err); print(r.out)
    r = as_user(demo_server, "admin", "shares"); print(r.code, r.err, r.out)
    r = as_user(demo_server, "admin", "why", "--json", demo_server.alice_workload[0]); print(r.code, r.err, r.out[:3000])
    print(time.time()-t)
