"""GET /api/v1/org/{org}/project/{project}/repository/{repo}/definition: the choices a start
of the repository has (the console's start form): entry points (publicFlows when listed),
profiles, declared arguments typed by their values, at the configured branch or another
one; and a start at an unknown entry point names the valid ones."""
from conftest import unique
from repo_util import REPO_API, create_repo, error, git, proj  # noqa: F401 (fixtures)

DEFINITION = """
configuration:
  entryPoint: main
  activeProfiles: [eu]
  arguments:
    region: "eu-1"
    replicas: 3
    dryRun: false
    limits: {cpu: 2}
    stamp: "${datetime.current()}"
profiles:
  eu:
    configuration:
      arguments: {region: "eu-2"}
  us:
    flows:
      usOnly:
        - log: us
flows:
  main:
    - log: main
  cleanup:
    - log: cleanup
"""

PUBLIC = """
publicFlows: [deploy]
flows:
  deploy:
    - log: deploy
  helper:
    - log: helper
"""


def definition(client, org, project, repo, **params):
    return client.get((REPO_API % (org, project)) + "/%s/definition" % repo, params=params)


def test_the_definition_lists_entry_points_profiles_and_arguments(admin, git, proj):
    org, project, _ = proj
    repo = git({"concord.yml": DEFINITION})
    name, _ = create_repo(admin, org, project, repo.url)
    r = definition(admin, org, project, name)
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["commitId"] == repo.head()
    assert d["hasDefinition"] is True
    assert d["entryPoints"] == ["main", "cleanup"]
    assert d["defaultEntryPoint"] == "main"
    assert d["profiles"] == ["eu", "us"]
    assert d["activeProfiles"] == ["eu"]
    assert d["arguments"] == [
        {"name": "region", "type": "string", "default": "eu-1"},
        {"name": "replicas", "type": "number", "default": 3},
        {"name": "dryRun", "type": "boolean", "default": False},
        {"name": "limits", "type": "object"},
        {"name": "stamp", "type": "expression"},
    ]


def test_another_branch_and_public_flows(admin, git, proj):
    org, project, _ = proj
    repo = git({"concord.yml": DEFINITION})
    name, _ = create_repo(admin, org, project, repo.url)
    repo.checkout("next", create=True)
    sha = repo.commit({"concord.yml": PUBLIC})
    d = definition(admin, org, project, name, repoBranchOrTag="next").json()
    assert (d["commitId"], d["entryPoints"], d["defaultEntryPoint"], d["profiles"]) == (sha, ["deploy"], "default", [])
    assert d["activeProfiles"] == ["default"] and d["arguments"] == []
    error(definition(admin, org, project, name, repoBranchOrTag="nosuch"), 400, "nosuch")
    error(definition(admin, org, project, name, repoBranchOrTag="next", repoCommitId=sha), 400, "not both")


def test_no_definition_and_unknown_names(admin, git, proj):
    org, project, _ = proj
    repo = git({"README": "no flows here"})
    name, _ = create_repo(admin, org, project, repo.url)
    d = definition(admin, org, project, name).json()
    assert d == {"commitId": repo.head(), "hasDefinition": False, "entryPoints": [], "profiles": [],
                 "activeProfiles": [], "arguments": []}
    error(definition(admin, org, project, "nosuchrepo"), 404, "nosuchrepo")
    error(definition(admin, org, unique("noproject"), name), 404, "")


def test_an_unknown_entry_point_names_the_valid_ones(admin, git, proj):
    org, project, _ = proj
    repo = git({"concord.yml": DEFINITION})
    name, _ = create_repo(admin, org, project, repo.url)
    r = admin.post("/api/v1/process", files={"org": (None, org), "project": (None, project), "repo": (None, name),
                                             "entryPoint": (None, "nosuchflow")})
    msg = error(r, 400, "Unknown entry point: 'nosuchflow'")
    assert msg.endswith("its entry points: main, cleanup)"), msg
