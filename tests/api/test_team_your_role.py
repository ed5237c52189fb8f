"""GET /api/v1/org/{org}/team/{team} says by which role the caller manages the team
(`yourRole`, Accord's own, for the console): OWNER for the team's owners, the
organization's owners and admins; MAINTAINER; MEMBER; NONE for other members of the org."""
from proc_util import make_org, make_team


def test_your_role(admin, new_user):
    org, _ = make_org(admin)
    owner, maint, member, outsider = new_user(), new_user(), new_user(), new_user()
    team = make_team(admin, org, [(owner, "OWNER"), (maint, "MAINTAINER"), (member, "MEMBER")])
    other = make_team(admin, org, [(outsider, "MEMBER")])
    url = "/api/v1/org/%s/team/%s" % (org, team)
    for client, role in ((admin, "OWNER"), (owner, "OWNER"), (maint, "MAINTAINER"), (member, "MEMBER"),
                         (outsider, "NONE")):
        r = client.get(url)
        assert r.status_code == 200, r.text
        assert r.json()["yourRole"] == role, (client.username, r.json())
    # an owner of another team of the org owns the org: OWNER here too
    r = admin.put("/api/v1/org/%s/team/%s/users" % (org, other), json=[{"username": outsider.username, "role": "OWNER"}])
    assert r.status_code == 200, r.text
    assert outsider.get(url).json()["yourRole"] == "OWNER"
