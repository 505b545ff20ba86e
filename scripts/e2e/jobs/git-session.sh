# preload-git (tests/e2e): six commits of the 25 files under content/cN/
# (written by the registry's entry), a branch merged, gc, fsck, log, diff,
# archive; everything git prints must not change with uarch.
set -e
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.org
export GIT_AUTHOR_DATE=2024-01-01T00:00:00Z GIT_COMMITTER_DATE=2024-01-01T00:00:00Z
export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
rm -rf repo
git init -q -b main repo
cd repo
for c in 0 1 2 3 4 5; do
	cp ../content/c$c/* .
	git add -A
	git commit -q -m "commit $c"
	if [ $c = 2 ]; then git checkout -q -b side; fi
done
git checkout -q main
git merge -q --no-edit -s ours side
git gc -q
git fsck --full --strict
git log --stat --format='%H %s'
git diff HEAD~3 HEAD --stat
git archive --format=tar -o ../archive.tar HEAD
sha256sum < ../archive.tar
git cat-file -p HEAD
