// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Forwarder
/// @notice A checkout session's deposit address. Each one is an EIP-1167 minimal-proxy clone of a
/// single Forwarder implementation, deployed with CREATE2 by the ForwarderFactory, which binds it
/// to one merchant wallet in the deploying transaction. From then on it can send what it holds
/// (the native coin and any ERC-20) to that merchant and nowhere else. Anyone may trigger a
/// flush: the destination is fixed, so no access control is needed.
///
/// A token transfer is judged by its return value (true or nothing) on the EVM; on Tron, where
/// mainnet USDT returns false from a transfer that succeeded, by this forwarder's balance instead
/// (`checksBalanceChange`, set by the factory for every clone at once).
contract Forwarder {
    /// @notice The factory that deployed the implementation; the only caller of `initialize`.
    /// Immutable, so it lives in the implementation's code and every clone sees the same value.
    address public immutable factory;

    /// @notice true: a token transfer succeeded when it did not revert and this forwarder's balance
    /// fell by the amount, whatever it returned (Tron). false: when it returned true or nothing (EVM).
    /// Immutable like `factory`: every clone judges transfers the same way.
    bool public immutable checksBalanceChange;

    /// @notice The wallet every flush pays. Zero until the factory initializes the clone.
    address public merchant;

    /// @notice `amount` of `token` (address(0) for the native coin) was sent to `merchant`.
    event Flushed(address indexed token, address indexed merchant, uint256 amount);

    error NotFactory(address caller);
    error AlreadyInitialized(address merchant);
    error ZeroMerchant();
    error NotInitialized();
    error NativeTransferFailed(address merchant, uint256 amount);
    error TokenTransferFailed(address token, address merchant, uint256 amount);
    error NotAToken(address token);

    constructor(bool checksBalanceChange_) {
        factory = msg.sender;
        checksBalanceChange = checksBalanceChange_;
    }

    /// @notice Binds this forwarder to `merchant_`. Callable once, only by the factory (which does
    /// so in the same transaction that deploys the clone).
    function initialize(address merchant_) external {
        if (msg.sender != factory) revert NotFactory(msg.sender);
        if (merchant != address(0)) revert AlreadyInitialized(merchant);
        if (merchant_ == address(0)) revert ZeroMerchant();
        merchant = merchant_;
    }

    /// @notice Accepts the native coin; it stays here until a flush.
    receive() external payable {}

    /// @notice Sends the whole native balance to the merchant. Returns the amount sent.
    function flushNative() public returns (uint256 amount) {
        address to = _merchant();
        amount = address(this).balance;
        if (amount == 0) return 0;
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert NativeTransferFailed(to, amount);
        emit Flushed(address(0), to, amount);
    }

    /// @notice Sends the whole balance of `token` to the merchant. Returns the amount sent.
    function flushToken(address token) public returns (uint256 amount) {
        address to = _merchant();
        amount = _balanceOf(token);
        if (amount == 0) return 0;
        if (checksBalanceChange) _balanceCheckedTransfer(token, to, amount);
        else _safeTransfer(token, to, amount);
        emit Flushed(token, to, amount);
    }

    /// @notice `flushToken` for each of `tokens`.
    function flushTokens(address[] calldata tokens) external {
        for (uint256 i = 0; i < tokens.length; ++i) {
            flushToken(tokens[i]);
        }
    }

    function _merchant() private view returns (address to) {
        to = merchant;
        if (to == address(0)) revert NotInitialized();
    }

    function _balanceOf(address token) private view returns (uint256) {
        if (token.code.length == 0) revert NotAToken(token);
        (bool ok, bytes memory ret) = token.staticcall(abi.encodeWithSelector(0x70a08231, address(this)));
        if (!ok || ret.length < 32) revert NotAToken(token);
        return abi.decode(ret, (uint256));
    }

    /// @dev transfer(to, amount) of the whole balance (`amount`) that ignores what the token returns
    /// (Tron USDT returns false on success) and checks that the balance fell by `amount`, i.e. to zero.
    function _balanceCheckedTransfer(address token, address to, uint256 amount) private {
        (bool ok,) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || _balanceOf(token) != 0) revert TokenTransferFailed(token, to, amount);
    }

    /// @dev transfer(to, amount) that accepts tokens returning `true` and tokens returning nothing
    /// (USDT and other pre-standard tokens); anything else, or a revert, fails.
    function _safeTransfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok) revert TokenTransferFailed(token, to, amount);
        if (ret.length != 0 && (ret.length < 32 || abi.decode(ret, (uint256)) != 1)) {
            revert TokenTransferFailed(token, to, amount);
        }
    }
}
