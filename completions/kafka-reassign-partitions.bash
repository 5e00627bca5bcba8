_kafka_reassign_partitions_completion() {
    local IFS=$'\n'
    local response type value
    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD COMP_LINE="${COMP_LINE-}" \
COMP_POINT="${COMP_POINT-}" _KAFKA_REASSIGN_PARTITIONS_COMPLETE=bash_complete "$1" 2>/dev/null)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames 2>/dev/null
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default 2>/dev/null
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value")
        fi
    done
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}

complete -o nosort -F _kafka_reassign_partitions_completion kafka-reassign-partitions
