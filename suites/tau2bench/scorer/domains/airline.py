"""The airline domain (upstream ``domains/airline/data_model.py`` and ``tools.py``, 1.0.1): records, tools, texts."""

import copy
from typing import List

from ..arithmetic import calculate as arithmetic_calculate
from ..models import ListOf, coerce
from ..toolkit import ModelOrDict, Record, is_tool
from .airline_records import (AIRPORTS, CABIN, CERTIFICATE, FLIGHT_INFO, FLIGHT_TYPE, INSURANCE, PASSENGER, PAYMENT,
                              RESERVATION, RESERVATION_FLIGHT, AirlineLookups, _records)


class AirlineTools(AirlineLookups):
    """All the tools for the airline domain."""

    # -- tools
    @is_tool("write")
    def book_reservation(self, user_id: str, origin: str, destination: str, flight_type: FLIGHT_TYPE,
                         cabin: CABIN, flights: ListOf(ModelOrDict(FLIGHT_INFO)),
                         passengers: ListOf(ModelOrDict(PASSENGER)), payment_methods: ListOf(ModelOrDict(PAYMENT)),
                         total_baggages: int, nonfree_baggages: int, insurance: INSURANCE):
        """
        Book a reservation.

        Args:
            user_id: The ID of the user to book the reservation such as 'sara_doe_496'`.
            origin: The IATA code for the origin city such as 'SFO'.
            destination: The IATA code for the destination city such as 'JFK'.
            flight_type: The type of flight such as 'one_way' or 'round_trip'.
            cabin: The cabin class such as 'basic_economy', 'economy', or 'business'.
            flights: An array of objects containing details about each piece of flight.
            passengers: An array of objects containing details about each passenger.
            payment_methods: An array of objects containing details about each payment method.
            total_baggages: The total number of baggage items to book the reservation.
            nonfree_baggages: The number of non-free baggage items to book the reservation.
            insurance: Whether the reservation has insurance.
        """
        flights = _records(flights, FLIGHT_INFO)
        passengers = _records(passengers, PASSENGER)
        payment_methods = _records(payment_methods, PAYMENT)
        user = self._get_user(user_id)
        reservation_id = self._get_new_reservation_id()
        reservation = coerce(RESERVATION, {
            "reservation_id": reservation_id, "user_id": user_id, "origin": origin, "destination": destination,
            "flight_type": flight_type, "cabin": cabin, "flights": [], "passengers": copy.deepcopy(passengers),
            "payment_history": copy.deepcopy(payment_methods), "created_at": "2024-05-15T15:00:00",
            "total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages, "insurance": insurance})
        total_price = 0
        days = []
        for info in flights:
            number = info["flight_number"]
            flight = self._get_flight(number)
            day = self._get_flight_instance(number, info["date"])
            if day["status"] != "available":
                raise ValueError(f"Flight {number} not available on date {info['date']}")
            if day["available_seats"][cabin] < len(passengers):
                raise ValueError(f"Not enough seats on flight {number}")
            price = day["prices"][cabin]
            reservation["flights"].append(coerce(RESERVATION_FLIGHT, {
                "flight_number": number, "origin": flight["origin"], "destination": flight["destination"],
                "date": info["date"], "price": price}))
            days.append(day)
            total_price += price * len(passengers)
        if insurance == "yes":
            total_price += 30 * len(passengers)
        total_price += 50 * nonfree_baggages
        for method in payment_methods:
            payment_id, amount = method["payment_id"], method["amount"]
            if payment_id not in user["payment_methods"]:
                raise ValueError(f"Payment method {payment_id} not found")
            stored = user["payment_methods"][payment_id]
            if stored["source"] in {"gift_card", "certificate"} and stored["amount"] < amount:
                raise ValueError(f"Not enough balance in payment method {payment_id}")
        total_payment = sum(method["amount"] for method in payment_methods)
        if total_payment != total_price:
            raise ValueError(f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}")
        for method in payment_methods:
            stored = user["payment_methods"][method["payment_id"]]
            if stored["source"] == "gift_card":
                stored["amount"] -= method["amount"]
            elif stored["source"] == "certificate":
                user["payment_methods"].pop(method["payment_id"])
        for day in days:
            day["available_seats"][cabin] -= len(passengers)
        self.db["reservations"][reservation_id] = reservation
        self.db["users"][user_id]["reservations"].append(reservation_id)
        return Record(reservation)

    @is_tool("generic")
    def calculate(self, expression: str):
        """
        Calculate the result of a mathematical expression.

        Args:
            expression: The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.

        Returns:
            The result of the mathematical expression.

        Raises:
            ValueError: If the expression is invalid.
        """
        return arithmetic_calculate(expression)

    @is_tool("write")
    def cancel_reservation(self, reservation_id: str):
        """
        Cancel the whole reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation is not found.
        """
        reservation = self._get_reservation(reservation_id)
        refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return Record(reservation)

    @is_tool("read")
    def get_reservation_details(self, reservation_id: str):
        """
        Get the details of a reservation.

        Args:
            reservation_id: The reservation ID, such as '8JX2WO'.

        Returns:
            The reservation details.

        Raises:
            ValueError: If the reservation is not found.
        """
        return Record(self._get_reservation(reservation_id))

    @is_tool("read")
    def get_user_details(self, user_id: str):
        """
        Get the details of a user, including their reservations.

        Args:
            user_id: The user ID, such as 'sara_doe_496'.

        Returns:
            The user details.

        Raises:
            ValueError: If the user is not found.
        """
        return Record(self._get_user(user_id))

    @is_tool("read")
    def list_all_airports(self):
        """Returns a list of all available airports.

        Returns:
            A dictionary mapping IATA codes to AirportInfo objects.
        """
        return [Record({"iata": iata, "city": city}) for iata, city in AIRPORTS]

    @is_tool("read")
    def search_direct_flight(self, origin: str, destination: str, date: str):
        """
        Search for direct flights between two cities on a specific date.

        Args:
            origin: The origin city airport in three letters, such as 'JFK'.
            destination: The destination city airport in three letters, such as 'LAX'.
            date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.

        Returns:
            The direct flights between the two cities on the specific date.
        """
        return [Record(flight) for flight in self._search_direct_flight(date=date, origin=origin,
                                                                        destination=destination)]

    @is_tool("read")
    def search_onestop_flight(self, origin: str, destination: str, date: str):
        """
        Search for one-stop flights between two cities on a specific date.

        Args:
            origin: The origin city airport in three letters, such as 'JFK'.
            destination: The destination city airport in three letters, such as 'LAX'.
            date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.

        Returns:
            A list of pairs of DirectFlight objects.
        """
        results = []
        for first in self._search_direct_flight(date=date, origin=origin, destination=None):
            first["date"] = date
            # QUIRK (upstream): the next day is "2024-05-" + (day + 1), unpadded and never rolled into June
            date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
            for second in self._search_direct_flight(date=date2, origin=first["destination"],
                                                     destination=destination,
                                                     leave_after=first["scheduled_arrival_time_est"]):
                second["date"] = date2
                results.append([Record(first), Record(second)])
        return results

    @is_tool("write")
    def send_certificate(self, user_id: str, amount: int):
        """
        Send a certificate to a user. Be careful!

        Args:
            user_id: The ID of the user to book the reservation, such as 'sara_doe_496'.
            amount: The amount of the certificate to send.

        Returns:
            A message indicating the certificate was sent.

        Raises:
            ValueError: If the user is not found.
        """
        user = self._get_user(user_id)
        for payment_id in [f"certificate_{n}" for n in (3221322, 3221323, 3221324)]:
            if payment_id not in user["payment_methods"]:
                user["payment_methods"][payment_id] = coerce(CERTIFICATE, {"id": payment_id, "amount": amount,
                                                                           "source": "certificate"})
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    @is_tool("generic")
    def transfer_to_human_agents(self, summary: str):
        """
        Transfer the user to a human agent, with a summary of the user's issue.

        Only transfer if
         -  the user explicitly asks for a human agent
         -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return "Transfer successful"

    @is_tool("write")
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int, nonfree_baggages: int,
                                    payment_id: str):
        """
        Update the baggage information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'
            total_baggages: The updated total number of baggage items included in the reservation.
            nonfree_baggages: The updated number of non-free baggage items included in the reservation.
            payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation is not found.
            ValueError: If the user is not found.
            ValueError: If the payment method is not found.
            ValueError: If the certificate cannot be used to update reservation.
            ValueError: If the gift card balance is not enough.
        """
        reservation = self._get_reservation(reservation_id)
        user = self._get_user(reservation["user_id"])
        total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        # upstream assigns without validation: the value is stored as given
        reservation["total_baggages"] = total_baggages
        reservation["nonfree_baggages"] = nonfree_baggages
        return Record(reservation)

    @is_tool("write")
    def update_reservation_flights(self, reservation_id: str, cabin: CABIN,
                                   flights: ListOf(ModelOrDict(FLIGHT_INFO)), payment_id: str):
        """
        Update the flight information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.
            cabin: The cabin class of the reservation
            flights: An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array.
            payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation is not found.
            ValueError: If the user is not found.
            ValueError: If the payment method is not found.
            ValueError: If the certificate cannot be used to update reservation.
            ValueError: If the gift card balance is not enough.
        """
        flights = _records(flights, FLIGHT_INFO)
        reservation = self._get_reservation(reservation_id)
        user = self._get_user(reservation["user_id"])
        total_price = 0
        new_flights = []
        count = len(reservation["passengers"])
        for info in flights:
            kept = next((f for f in reservation["flights"] if f["flight_number"] == info["flight_number"]
                         and f["date"] == info["date"] and cabin == reservation["cabin"]), None)
            if kept:
                total_price += kept["price"] * count
                new_flights.append(kept)
                continue
            flight = self._get_flight(info["flight_number"])
            day = self._get_flight_instance(info["flight_number"], info["date"])
            if day["status"] != "available":
                raise ValueError(f"Flight {info['flight_number']} not available on date {info['date']}")
            if day["available_seats"][cabin] < count:
                raise ValueError(f"Not enough seats on flight {info['flight_number']}")
            entry = coerce(RESERVATION_FLIGHT, {"flight_number": info["flight_number"], "date": info["date"],
                                                "price": day["prices"][cabin], "origin": flight["origin"],
                                                "destination": flight["destination"]})
            total_price += entry["price"] * count
            new_flights.append(entry)
        total_price -= sum(f["price"] for f in reservation["flights"]) * count
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"] = new_flights
        reservation["cabin"] = cabin
        return Record(reservation)

    @is_tool("write")
    def update_reservation_passengers(self, reservation_id: str, passengers: ListOf(ModelOrDict(PASSENGER))):
        """
        Update the passenger information of a reservation.

        Args:
            reservation_id: The reservation ID, such as 'ZFA04Y'.
            passengers: An array of objects containing details about each passenger.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation is not found.
            ValueError: If the number of passengers does not match.
        """
        passengers = _records(passengers, PASSENGER)
        reservation = self._get_reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ValueError("Number of passengers does not match")
        reservation["passengers"] = copy.deepcopy(passengers)
        return Record(reservation)

    @is_tool("read")
    def get_flight_status(self, flight_number: str, date: str):
        """
        Get the status of a flight.

        Args:
            flight_number: The flight number.
            date: The date of the flight.

        Returns:
            The status of the flight.

        Raises:
            ValueError: If the flight is not found.
        """
        return self._get_flight_instance(flight_number, date)["status"]
