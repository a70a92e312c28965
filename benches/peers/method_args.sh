# Sourced by frontier_seeds.sh and warm_start.sh: the cifar_lt flags of one of their method
# names (issue 56's variants: pauci is PAUCI with the paper's gamma ascent, as every table
# before the default became descent ran it, pauci-descent with the released code's descent,
# upauci-exact UPAUCI with the exact weight step (the default since issue 56), upauci UPAUCI
# with the paper's weight step, as the tables before it ran; any other name is `--method
# NAME`).
method_args() {
    case "$1" in
        pauci) echo "--method pauci --gamma-step ascent" ;;
        pauci-descent) echo "--method pauci --gamma-step descent" ;;
        upauci-exact) echo "--method upauci --weight-step exact" ;;
        upauci) echo "--method upauci --weight-step paper" ;;
        *) echo "--method $1" ;;
    esac
}
