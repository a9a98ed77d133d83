# bash completion for mibz2 and mibz2fs (installed as .../bash-completion/completions/mibz2 and
# .../mibz2fs). Plain bash: it does not need the bash-completion package's helpers.

_mibz2_complete_files() {  # files matching *.bz2, *.tbz2, *.tbz, and directories
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null
  local ext
  COMPREPLY+=($(compgen -d -- "$1"))
  for ext in bz2 tbz2 tbz; do COMPREPLY+=($(compgen -f -X "!*.$ext" -- "$1")); done
}

_mibz2() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      cat | index | info | verify | help) command=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W 'cat index info verify help -h --help -V --version' -- "$cur"))
    return
  fi
  case $prev in
    --index-dir)
      local IFS=$'\n'
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -d -- "$cur"))
      return ;;
    -j | --threads | --offset | --length | --lines) return ;;  # a number, a SIZE or FIRST:LAST
  esac
  if [[ $cur == -* ]]; then
    local options='-j --threads --index-dir -h --help'
    case $command in
      cat) options+=' --offset --length --lines' ;;
      index) options+=' -f --force' ;;
      info) options+=' --json' ;;
    esac
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  [[ $command == help ]] && return
  _mibz2_complete_files "$cur"
}

_mibz2fs() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  if [[ $prev == -o ]]; then
    # One option of a comma-separated list: complete the part after the last comma.
    local done_part="" part=$cur
    if [[ $cur == *,* ]]; then
      done_part=${cur%,*},
      part=${cur##*,}
    fi
    if [[ $part == index_dir=* ]]; then
      local IFS=$'\n' d
      compopt -o filenames 2>/dev/null
      for d in $(compgen -d -- "${part#index_dir=}"); do COMPREPLY+=("${done_part}index_dir=$d"); done
      return
    fi
    if [[ $part == log_level=* ]]; then
      COMPREPLY=($(compgen -P "${done_part}log_level=" -W 'trace debug info warn warning error critical off' -- "${part#log_level=}"))
      return
    fi
    compopt -o nospace 2>/dev/null
    COMPREPLY=($(compgen -P "$done_part" -W 'threads= cache_size= index_dir= wait_index log_level= allow_other
      allow_root auto_unmount max_threads= max_idle_threads= clone_fd debug nosuid nodev noexec noatime' -- "$part"))
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W '-o -f -d -s -h --help -V --version' -- "$cur"))
    return
  fi
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen -d -- "$cur"))  # SOURCE and MOUNTPOINT are directories
}

complete -F _mibz2 mibz2
complete -F _mibz2fs mibz2fs
