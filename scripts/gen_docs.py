#!/usr/bin/env python3
"""gen_docs.py GPUPROF OUTDIR: man pages and shell completions generated from
the --help text (the one source): OUTDIR/man/gpuprof.1 (the command list of
`gpuprof --help`) and OUTDIR/man/gpuprof-CMD.1 per subcommand (its
`gpuprof CMD --help`), OUTDIR/completions/gpuprof (bash) and
OUTDIR/completions/_gpuprof (zsh) with the subcommands and each one's
options. Run by the build (target gpuprof_docs), installed by `make install`."""
import os, re, subprocess, sys


def help_text(gp, *args):
    r = subprocess.run([gp] + list(args) + ["--help"], capture_output=True, text=True)
    return (r.stdout or r.stderr).rstrip("\n")


def roff(s):
    s = s.replace("\\", "\\e")
    return "\n".join(("\\&" + l if l.startswith((".", "'")) else l) for l in s.split("\n"))


def version(gp):
    r = subprocess.run([gp, "--version"], capture_output=True, text=True)
    return (r.stdout.split() + ["", "?"])[1] if r.stdout else "?"


def commands(top):
    out, on = [], False
    for line in top.splitlines():
        if line.strip() == "commands:":
            on = True
            continue
        m = re.match(r"^  (\w[\w-]*)\s{2,}(.*)$", line) if on else None
        if m:
            out.append((m.group(1), m.group(2).strip()))
        elif on and line.strip() == "":
            if out:
                on = False
    return out


def options(text):
    opts = set()
    for m in re.finditer(r"(?:^|[\s,\[])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", text):
        opts.add(m.group(1))
    return sorted(opts - {"--help"}) + ["--help"]


def page(name, section_title, desc, body, ver, see):
    return "\n".join([
        '.TH %s 1 "" "gpuprof %s" "User Commands"' % (name.upper(), ver),
        ".SH NAME", "%s \\- %s" % (name, roff(desc)),
        ".SH DESCRIPTION",
        "The text below is the output of \\fB%s\\fR (one source for both)." % section_title,
        ".PP", ".nf", roff(body), ".fi",
        ".SH SEE ALSO", see, ""])


def main():
    gp, outdir = sys.argv[1], sys.argv[2]
    ver = version(gp)
    top = help_text(gp)
    cmds = commands(top)
    if not cmds:
        sys.exit("gen_docs: no commands in `%s --help`" % gp)
    os.makedirs(os.path.join(outdir, "man"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "completions"), exist_ok=True)
    see = ", ".join("\\fBgpuprof\\-%s\\fR(1)" % c for c, _ in cmds)
    with open(os.path.join(outdir, "man", "gpuprof.1"), "w") as f:
        f.write(page("gpuprof", "gpuprof \\-\\-help", "GPU profiling toolkit", top, ver, see))
    opts = {}
    for c, d in cmds:
        t = help_text(gp, c)
        opts[c] = options(t)
        with open(os.path.join(outdir, "man", "gpuprof-%s.1" % c), "w") as f:
            f.write(page("gpuprof-" + c, "gpuprof %s \\-\\-help" % c, d, t, ver,
                         "\\fBgpuprof\\fR(1)"))
    names = " ".join(c for c, _ in cmds)
    cases = "\n".join("        %s) opts=\"%s\" ;;" % (c, " ".join(o)) for c, o in opts.items())
    with open(os.path.join(outdir, "completions", "gpuprof"), "w") as f:
        f.write("""# bash completion for gpuprof (generated from --help by scripts/gen_docs.py)
_gpuprof() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} opts
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "%s --help --version" -- "$cur"))
        return
    fi
    case "$cmd" in
%s
        *) opts="" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _gpuprof gpuprof
""" % (names, cases))
    zcmds = "\n".join("    '%s:%s'" % (c, d.replace("'", "'\\''").replace(":", "\\:")) for c, d in cmds)
    zcases = "\n".join("        %s) _arguments '*:file:_files' %s ;;" % (
        c, " ".join("'%s'" % o for o in o_)) for c, o_ in opts.items())
    with open(os.path.join(outdir, "completions", "_gpuprof"), "w") as f:
        f.write("""#compdef gpuprof
# zsh completion for gpuprof (generated from --help by scripts/gen_docs.py)
_gpuprof() {
  local -a cmds
  cmds=(
%s
  )
  if (( CURRENT == 2 )); then
    _describe 'gpuprof command' cmds
    return
  fi
  case $words[2] in
%s
  esac
}
_gpuprof "$@"
""" % (zcmds, zcases))
    print("gen_docs: %d man pages, bash and zsh completions in %s" % (len(cmds) + 1, outdir))


if __name__ == "__main__":
    main()
