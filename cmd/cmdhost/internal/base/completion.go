package base

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The completion scripts ask cmdhost itself what may follow the words
// typed so far (urfave/cli's --generate-bash-completion), so that they
// never go stale as commands and flags change. The bash one needs nothing
// but bash (not the bash-completion package).
const (
	bashCompletion = `# bash completion for cmdhost: source <(cmdhost completion bash)
_cmdhost_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" opts
  local words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _cmdhost_complete cmdhost bin/cmdhost
`
	zshCompletion = `#compdef cmdhost
# zsh completion for cmdhost: source <(cmdhost completion zsh), or save as _cmdhost on $fpath
_cmdhost() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _cmdhost cmdhost bin/cmdhost
`
)

func CompletionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash or zsh)",
		ArgsUsage: "bash|zsh",
		Description: "Completes commands, subcommands and flags. Load it in the current shell:\n\n" +
			"   source <(cmdhost completion bash)    # or zsh\n\n" +
			"or for every shell: cmdhost completion bash > /etc/bash_completion.d/cmdhost",
		Action: func(c *cli.Context) error {
			scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}
			script, ok := scripts[c.Args().First()]
			if c.NArg() != 1 || !ok {
				return cli.Exit("completion needs a shell, bash or zsh: cmdhost completion bash", ExitUsage)
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}
