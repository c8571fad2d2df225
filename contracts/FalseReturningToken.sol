// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title FalseReturningToken
/// @notice A test ERC-20 that behaves like USDT on Tron mainnet: `transfer` and `transferFrom`
/// move the tokens and return `false` (32 zero bytes), because StandardTokenWithFees lacks a
/// `return`. A caller that trusts the return value fails every transfer; the Tron forwarder checks
/// its balance instead. `setRefusing(holder, true)` makes transfers from `holder` move nothing and
/// return false, so a test can show the balance check still catches a transfer that did not happen.
/// Configurable name, symbol and decimals; `mint` for its owner (the deployer). Not for real value.
contract FalseReturningToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public refusing;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error NotOwner(address caller);
    error InsufficientBalance(address from, uint256 balance, uint256 needed);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    error ZeroAddress();

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = msg.sender;
    }

    function mint(address to, uint256 amount) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        if (to == address(0)) revert ZeroAddress();
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// @notice Transfers from `holder` silently do nothing (and return false) while set.
    function setRefusing(address holder, bool value) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        refusing[holder] = value;
    }

    /// @dev Returns false even when it moved the tokens, like Tron's USDT.
    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return false;
    }

    /// @dev Returns false even when it moved the tokens, like Tron's USDT.
    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(msg.sender, allowed, amount);
            allowance[from][msg.sender] = allowed - amount;
        }
        _transfer(from, to, amount);
        return false;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) private {
        if (to == address(0)) revert ZeroAddress();
        if (refusing[from]) return;
        uint256 balance = balanceOf[from];
        if (balance < amount) revert InsufficientBalance(from, balance, amount);
        balanceOf[from] = balance - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
