"""A repository inside another (agitmem in a submodule and in its
superproject, each with the git hooks), and git driven from elsewhere
through GIT_DIR/GIT_WORK_TREE by a wrapper."""
from __future__ import annotations

from pathlib import Path


from testing.daily import commit
from testing.daily import goal_here
from testing.daily import head
from testing.daily import settled
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

MAIN = 'refs/agitmem/heads/main'
SIDE = 'refs/agitmem/heads/side'






# -- submodules ---------------------------------------------------------------------------

def test_agitmem_in_a_submodule_and_its_superproject(memrepo: Path, tmp_path: Path) -> None:
    lib = tmp_path / 'lib'
    git('init', '-q', str(lib), cwd=tmp_path)
    (lib / 'lib.py').write_text('x = 1\n')
    git('add', '.', cwd=lib)
    git('commit', '-q', '-m', 'lib', cwd=lib)
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=super goal', cwd=memrepo)
    git('submodule', 'add', '-q', str(lib), 'lib', cwd=memrepo)
    git('commit', '-q', '-m', 'add lib', cwd=memrepo)
    sub = memrepo / 'lib'
    ok('init', cwd=sub)
    ok('install', 'git', cwd=sub)
    assert (memrepo / '.git' / 'modules' / 'lib' / 'hooks' / 'post-commit').exists()
    ok('state', 'set', 'current_goal=lib goal', cwd=sub)
    super_refs = git('for-each-ref', 'refs/agitmem/', cwd=memrepo)

    sub_head = commit(sub, 'more.py', 'lib commit')
    assert git('log', '-1', '--format=%B', MAIN, cwd=sub).count(f'Code-Head: {sub_head}') == 1
    assert git('for-each-ref', 'refs/agitmem/', cwd=memrepo) == super_refs
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- bumped lib\n')
    git('add', 'lib', cwd=memrepo)  # the gitlink
    git('commit', '-q', '-m', 'bump lib', cwd=memrepo)
    super_head = head(memrepo)
    assert f'Code-Head: {super_head}' in git('log', '-1', '--format=%B', MAIN, cwd=memrepo)
    assert 'lib commit' not in git('show', f'{MAIN}:notes.md', cwd=memrepo)
    assert 'bumped lib' not in git('show', f'{MAIN}:notes.md', cwd=sub)

    # the superproject back one commit, the submodule with it (detached)
    git('checkout', '-q', 'HEAD~1', cwd=memrepo)
    git('submodule', 'update', '-q', cwd=memrepo)
    assert head(sub) != sub_head
    assert goal_here(sub) == 'lib goal' and goal_here(memrepo) == 'super goal'
    git('checkout', '-q', 'main', cwd=memrepo)
    git('submodule', 'update', '-q', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=sub)
    assert goal_here(sub) == 'lib goal' and goal_here(memrepo) == 'super goal'
    for where, goal in ((memrepo, 'super goal'), (sub, 'lib goal')):
        ok('state', 'set', f'current_goal={goal}', cwd=where)
        settled(where, goal)


# -- GIT_DIR / GIT_WORK_TREE ----------------------------------------------------------------

def test_git_run_by_a_wrapper_with_git_dir_and_work_tree(memrepo: Path, tmp_path: Path) -> None:
    """A wrapper (an IDE, a script) runs git from elsewhere with GIT_DIR and
    GIT_WORK_TREE: the hooks find the repository and record the memory."""
    ok('install', 'git', cwd=memrepo)
    ok('state', 'set', 'current_goal=wrapped goal', cwd=memrepo)
    env = {'GIT_DIR': str(memrepo / '.git'), 'GIT_WORK_TREE': str(memrepo)}
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (memrepo / 'w.txt').write_text('w\n')
    with open(mem(memrepo, 'notes.md'), 'a') as f:
        f.write('- through the wrapper\n')
    git('add', 'w.txt', cwd=elsewhere, env=env)
    git('commit', '-q', '-m', 'wrapped', cwd=elsewhere, env=env)
    sha = head(memrepo)
    msg = git('log', '-1', '--format=%B', MAIN, cwd=memrepo)
    assert f'Code-Head: {sha}' in msg and 'through the wrapper' in git('show', f'{MAIN}:notes.md', cwd=memrepo)
    git('checkout', '-q', '-b', 'side', cwd=elsewhere, env=env)
    ok('state', 'set', 'current_goal=side goal', cwd=memrepo)
    git('checkout', '-q', 'main', cwd=elsewhere, env=env)
    assert goal_here(memrepo) == 'wrapped goal'
    # agitmem itself under the same wrapper, from a subdirectory
    out = ok('status', cwd=memrepo / 'src', env=env)
    assert 'refs/agitmem/heads/main' in out
    ok('state', 'set', 'current_goal=wrapped goal', cwd=memrepo / 'src', env=env)
    assert not (memrepo / 'src' / '.agent').exists()
    settled(memrepo, 'wrapped goal')
    assert tip(memrepo, SIDE) is not None


def test_agitmem_under_git_dir_and_work_tree_from_outside(memrepo: Path, tmp_path: Path) -> None:
    ok('state', 'set', 'current_goal=wrapped goal', cwd=memrepo)
    env = {'GIT_DIR': str(memrepo / '.git'), 'GIT_WORK_TREE': str(memrepo)}
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    assert git('rev-parse', '--show-toplevel', cwd=elsewhere, env=env).strip() == str(memrepo)
    out = ok('load', cwd=elsewhere, env=env)
    assert 'current_goal: wrapped goal' in out.splitlines()
    ok('note', 'from outside', cwd=elsewhere, env=env)
    assert 'from outside' in git('show', f'{MAIN}:notes.md', cwd=memrepo)
    assert not (elsewhere / '.agent').exists()


def test_a_bare_dotfiles_repository_through_git_dir_and_work_tree(tmp_path: Path) -> None:
    """`git init --bare ~/.dotfiles` and every command with GIT_DIR and
    GIT_WORK_TREE (relative ones too): no `.git` in the working tree, and
    agitmem works on that repository as git does, from anywhere."""
    home = tmp_path / 'home'
    (home / 'sub').mkdir(parents=True)
    git('init', '-q', '--bare', str(home / '.dotfiles'), cwd=tmp_path)
    env = {'GIT_DIR': str(home / '.dotfiles'), 'GIT_WORK_TREE': str(home)}
    (home / '.bashrc').write_text('alias ll="ls -l"\n')
    git('add', '.bashrc', cwd=home, env=env)
    git('commit', '-q', '-m', 'bashrc', cwd=home, env=env)
    ok('init', cwd=home, env=env)
    assert (home / '.agent' / 'memory' / 'tattoo.md').exists()
    assert '/.agent/' in (home / '.dotfiles' / 'info' / 'exclude').read_text()
    ok('state', 'set', 'current_goal=tidy the dotfiles', cwd=home / 'sub', env=env)
    ok('note', 'from the subdirectory', cwd=home / 'sub', env=env)
    relative = {'GIT_DIR': '../.dotfiles', 'GIT_WORK_TREE': '..'}
    out = ok('load', cwd=home / 'sub', env=relative)
    assert 'current_goal: tidy the dotfiles' in out.splitlines()
    assert 'from the subdirectory' in git('show', f'{MAIN}:notes.md', cwd=home, env=env)
    assert 'no unsaved changes' in ok('status', cwd=tmp_path, env=env)
    assert not (home / 'sub' / '.agent').exists() and not (tmp_path / '.agent').exists()
    # without them, home is no repository: agitmem says so, as git does
    line = bad('status', cwd=home)
    assert line.startswith('agitmem: not a git repository')


def test_git_dir_naming_no_repository_is_one_line(tmp_path: Path, memrepo: Path) -> None:
    line = bad('load', cwd=memrepo, env={'GIT_DIR': str(tmp_path / 'nowhere')})
    assert 'not a git repository' in line


def test_a_users_index_file_is_never_written(memrepo: Path, tmp_path: Path) -> None:
    """GIT_INDEX_FILE is the user's index for their git commands; agitmem
    reads and writes through its own calls, never through it."""
    index = tmp_path / 'other-index'
    env = {'GIT_DIR': str(memrepo / '.git'), 'GIT_WORK_TREE': str(memrepo), 'GIT_INDEX_FILE': str(index)}
    ok('state', 'set', 'current_goal=index kept', cwd=tmp_path, env=env)
    ok('save', cwd=tmp_path, env=env)
    assert not index.exists()
    assert 'index kept' in git('show', f'{MAIN}:state.json', cwd=memrepo)
