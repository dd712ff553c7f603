# bash completion for toastkit(1)
_toastkit() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
    local commands="send close later capabilities server-info listen wait list doctor run progress agent notify-send dunstify help"
    if [ "$cword" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
        return
    fi
    case "${words[1]}" in
    send | progress)
        case "$prev" in
        -s | --status) mapfile -t COMPREPLY < <(compgen -W "normal success warning error notification" -- "$cur"); return ;;
        -u | --urgency) mapfile -t COMPREPLY < <(compgen -W "low normal critical" -- "$cur"); return ;;
        -d | --duration) mapfile -t COMPREPLY < <(compgen -W "auto indefinite 2 4 6 10" -- "$cur"); return ;;
        -h | --hint) mapfile -t COMPREPLY < <(compgen -W "boolean: int: double: string: byte: variant:" -- "$cur"); compopt -o nospace 2>/dev/null; return ;;
        -i | --icon | -n | --app-icon) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        -A | --action) mapfile -t COMPREPLY < <(compgen -W "later dismiss" -- "$cur"); return ;;
        --in | --at | --progress) return ;;
        --terminal-code) mapfile -t COMPREPLY < <(compgen -W "99 777 9 plain" -- "$cur"); return ;;
        --dnd) mapfile -t COMPREPLY < <(compgen -W "hold drop show" -- "$cur"); return ;;
        --sound) mapfile -t COMPREPLY < <(compgen -W "default silent message-new-instant complete bell dialog-warning dialog-error" -- "$cur"); return ;;
        --id | --tap | --confirm | --reply | --reply-placeholder | --on-action | -a | --app-name | -c | --category | -r | --replace-id | -t | --expire-time) return ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "-s --status -i --icon --id -d --duration -A --action --tap --confirm --reply --reply-placeholder --on-action --shell
            --no-agent --progress --dnd --sound --in --at --terminal --terminal-code -w --wait --json -a --app-name -n --app-icon -u --urgency -c --category -h --hint -e --transient
            -p --print-id -r --replace-id -t --expire-time --plain --lang --default --help" -- "$cur")
        ;;
    notify-send)
        case "$prev" in
        -u | --urgency) mapfile -t COMPREPLY < <(compgen -W "low normal critical" -- "$cur"); return ;;
        -i | --icon | -n | --app-icon) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        -h | --hint | -A | --action | -a | --app-name | -c | --category | -r | --replace-id | -t | --expire-time) return ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "-u --urgency -t --expire-time -a --app-name -i --icon -n --app-icon -c --category
            -e --transient -h --hint -p --print-id -r --replace-id -w --wait -A --action --help --version" -- "$cur") ;;
    dunstify)
        case "$prev" in
        -u | --urgency) mapfile -t COMPREPLY < <(compgen -W "low normal critical" -- "$cur"); return ;;
        -i | --icon | -I | --raw_icon) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        -a | --appname | -h | --hints | -A | --action | -t | --timeout | -r | --replace | -C | --close) return ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "-a --appname -u --urgency -h --hints -A --action -t --timeout -i --icon
            -I --raw_icon -c --capabilities -s --serverinfo -p --printid -r --replace -C --close -b --block --help" -- "$cur") ;;
    close)
        case "$prev" in --id | --server-id) return ;; esac
        mapfile -t COMPREPLY < <(compgen -W "--id --server-id --help" -- "$cur") ;;
    wait)
        case "$prev" in --id) return ;; esac
        mapfile -t COMPREPLY < <(compgen -W "--id --json --help" -- "$cur") ;;
    run)
        case "$prev" in
        --pid) mapfile -t COMPREPLY < <(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"); return ;;
        --tail | --min-seconds | -a | --app-name | -d | --duration | --lang) return ;;
        esac
        if [[ "$cur" == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--tail --min-seconds --pid -a --app-name -d --duration --lang --help --" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        fi
        ;;
    agent)
        case "$prev" in
        --idle-timeout) mapfile -t COMPREPLY < <(compgen -W "0 30 60 300" -- "$cur"); return ;;
        --max-visible) mapfile -t COMPREPLY < <(compgen -W "1 2 3 4 5 6 7 8 9 10" -- "$cur"); return ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "--idle-timeout --max-visible --replace --if-scheduled --help" -- "$cur") ;;
    later) mapfile -t COMPREPLY < <(compgen -W "--show --json --app --help" -- "$cur") ;;
    capabilities | server-info | listen | list | doctor) mapfile -t COMPREPLY < <(compgen -W "--json --help" -- "$cur") ;;
    help) [ "$cword" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "${commands% help}" -- "$cur") ;;
    esac
}
complete -F _toastkit toastkit
